import { Type, type Static } from '@sinclair/typebox';

/** Response bodies of the VETTING endpoints, for serialisation and the OpenAPI document. */
const StopReasonSchema = Type.Union(
  ['VERIFICATION_PASSED', 'MAX_ATTEMPTS_REACHED', 'GENERATION_ERROR', 'VERIFICATION_ERROR', 'SAFETY_TRIGGERED'].map((reason) => Type.Literal(reason)),
);
const NullableString = Type.Union([Type.String(), Type.Null()]);
const SafetySignals = Type.Object({
  requires_attention: Type.Boolean({ description: 'true when the loop stopped with SAFETY_TRIGGERED' }),
});

/** Every attempt of a loop, in order. */
const Attempts = Type.Array(
  Type.Object({
    chatResponse: Type.String({ description: 'the draft of this attempt (rejected drafts included: never show these to the student)' }),
    verificationPassed: Type.Boolean(),
    verificationOutput: Type.Union([Type.String(), Type.Null()], { description: 'the verifier’s raw output; null when none was asked' }),
    requiresAttention: Type.Boolean(),
    checkedBy: Type.Union([Type.Literal('verifier'), Type.Literal('local_check'), Type.Null()]),
  }),
);

export const LightweightVettingResponse = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion'),
  created: Type.Integer(),
  model: Type.String({ description: 'the drafting model the request resolved to' }),
  choices: Type.Array(
    Type.Object({
      index: Type.Integer(),
      message: Type.Object({
        role: Type.Literal('assistant'),
        content: Type.String({ description: 'the verified draft, or the configured fallback message when the loop did not pass' }),
      }),
      finish_reason: Type.String(),
    }),
  ),
  usage: Type.Object(
    { prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() },
    { description: 'summed over every drafting and verifying call' },
  ),
  vetting_info: Type.Object({
    attemptCount: Type.Integer(),
    stopReason: StopReasonSchema,
    lastFailureReason: NullableString,
    attempts: Type.Optional(Type.Unsafe<Static<typeof Attempts>>({ ...Attempts, description: 'every attempt, as in /v1/vetting/full; only in the answers of the admin API’s playground (docs/admin-api.md)' })),
  }),
  safety_signals: SafetySignals,
});

export const FullVettingResponse = Type.Object({
  status: Type.Literal('success'),
  mode: Type.Union([Type.Literal('vetting'), Type.Literal('chat')]),
  result: Type.Object({ role: Type.Literal('assistant'), content: Type.String() }),
  verification: Type.Union([
    Type.Object({
      passed: Type.Boolean(),
      attemptCount: Type.Integer(),
      stopReason: StopReasonSchema,
      lastFailureReason: NullableString,
      attempts: Attempts,
    }),
    Type.Null(),
  ]),
  usage: Type.Object({ chatTokens: Type.Integer(), verificationTokens: Type.Integer(), totalTokens: Type.Integer() }),
  metadata: Type.Object({
    processingTimeMs: Type.Integer(),
    timestamp: Type.String(),
    sessionId: NullableString,
    userId: NullableString,
    chatModelUsed: Type.String(),
    verificationModelUsed: NullableString,
  }),
  safety_signals: SafetySignals,
});

export type LightweightVettingReply = Static<typeof LightweightVettingResponse>;
export type FullVettingReply = Static<typeof FullVettingResponse>;
export type AttemptView = Static<typeof Attempts>[number];
