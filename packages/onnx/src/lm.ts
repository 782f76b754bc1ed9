/**
 * Everything this package takes from the Troupe model code, in one place: the config parser, parameter shapes, RoPE
 * frequencies, the streamed safetensors reader, the checkpoint folder rules, and the sampling loop.
 */
export {
  parseHfConfig,
  parameterShapes,
  checkConfigAgainstTensors,
  ropeInvFreq,
  SafetensorsReader,
  checkpointFiles,
  CheckpointError,
  decodeBatch,
  loadTokenizer,
  benchCheckpoint,
  benchPrompt,
  peakRssMb,
  reportToParent,
  timeSampling,
} from '@troupe/lm';
export type {
  LmConfig,
  SafetensorsEntry,
  StepDecoder,
  GenerationItem,
  GenerationShared,
  GeneratedSample,
  GenerateOptions,
  Tokenizer,
  BenchCheckpointOptions,
  BenchCheckpointResult,
} from '@troupe/lm';
