import { HOSTS } from './hosts.js';
import { presetDescriptor } from './preset.js';

export type { HostPreset } from './preset.js';

/** The OpenAI-compatible hosts, each a descriptor made from its data (hosts.ts). */
export const groqProvider = presetDescriptor(HOSTS.groq);
export const togetherProvider = presetDescriptor(HOSTS.together);
export const fireworksProvider = presetDescriptor(HOSTS.fireworks);
export const deepseekProvider = presetDescriptor(HOSTS.deepseek);
export const xaiProvider = presetDescriptor(HOSTS.xai);
export const openrouterProvider = presetDescriptor(HOSTS.openrouter);
export const cerebrasProvider = presetDescriptor(HOSTS.cerebras);
export const ollamaProvider = presetDescriptor(HOSTS.ollama);
export const vllmProvider = presetDescriptor(HOSTS.vllm);
export const llamacppProvider = presetDescriptor(HOSTS.llamacpp);
export const lmstudioProvider = presetDescriptor(HOSTS.lmstudio);

export const PRESET_PROVIDERS = [
  groqProvider,
  togetherProvider,
  fireworksProvider,
  deepseekProvider,
  xaiProvider,
  openrouterProvider,
  cerebrasProvider,
  ollamaProvider,
  vllmProvider,
  llamacppProvider,
  lmstudioProvider,
] as const;
