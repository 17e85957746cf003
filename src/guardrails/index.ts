export { GUARDRAIL_CHECKS, GuardrailConfigError, GuardrailSchema, PII_KINDS, parseGuardrails } from './policy.js';
export type { GuardrailAction, GuardrailCheckName, GuardrailConfig, GuardrailPolicy, GuardrailStage, PiiKind } from './policy.js';
export { buildCheck, maskSpans } from './checks.js';
export type { TextCheck } from './checks.js';
export { findPii, ibanValid, luhn } from './pii.js';
export type { Span } from './pii.js';
