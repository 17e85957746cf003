export { addKnownSecrets, credentialSpans, redactText, redactValue, mediaReference, REDACTED, withoutKnownSecrets } from './redaction.js';
export type { RedactionOptions } from './redaction.js';
