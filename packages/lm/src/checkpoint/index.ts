/**
 * Checkpoints: safetensors I/O and Hugging Face-layout folders (full models and PEFT LoRA adapters).
 */
export * from './errors.js';
export * from './files.js';
export * from './safetensors.js';
export * from './hf.js';
