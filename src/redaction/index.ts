export { addKnownSecrets, credentialSpans, redactText, redactValue, mediaReference, REDACTED } from './redaction.js';
export type { RedactionOptions } from './redaction.js';
