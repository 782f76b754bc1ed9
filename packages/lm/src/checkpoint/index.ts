/**
 * Checkpoint files: safetensors I/O and the defensive reading of any file a checkpoint folder names. The model's
 * Hugging Face-layout folders (full models and PEFT LoRA adapters) are built on these in `lm/hf-checkpoint.ts`.
 */
export * from './errors.js';
export * from './files.js';
export * from './safetensors.js';
