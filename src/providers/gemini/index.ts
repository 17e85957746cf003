export { createGeminiProvider, type GeminiProviderOptions } from './provider.js';
