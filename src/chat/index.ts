export { checkImageUrl, inspectMessages, parseDataUri } from './content-validation.js';
export type { ContentRules, DataUri } from './content-validation.js';
