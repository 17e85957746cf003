export { addKnownSecrets, credentialSpans, redactText, redactValue, mediaReference, mediaReferenceOfBytes, REDACTED, withoutKnownSecrets } from './redaction.js';
export type { RedactionOptions } from './redaction.js';
