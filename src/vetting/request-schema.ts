import { Type, type Static } from '@sinclair/typebox';

/**
 * Inbound bodies of the two VETTING endpoints (strict: unknown fields are a 400 naming them).
 * Fields that are required only in `vetting` mode are optional here and checked in code,
 * so the error can say which mode needs them.
 */
const TextPart = Type.Object(
  { type: Type.Literal('text'), text: Type.String() },
  { additionalProperties: false },
);
const ImagePart = Type.Object(
  {
    type: Type.Literal('image_url'),
    image_url: Type.Object(
      { url: Type.String({ minLength: 1 }), detail: Type.Optional(Type.Union([Type.Literal('auto'), Type.Literal('low'), Type.Literal('high')])) },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
const FilePart = Type.Object(
  {
    type: Type.Union([Type.Literal('file'), Type.Literal('input_file')]),
    file: Type.Object(
      {
        filename: Type.Optional(Type.String()),
        mime_type: Type.Optional(Type.String()),
        file_data: Type.String({ minLength: 1, description: 'base64 or a data URI' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export const ContentPart = Type.Union([TextPart, ImagePart, FilePart]);

export const ChatMessage = Type.Object(
  {
    role: Type.Union([Type.Literal('system'), Type.Literal('developer'), Type.Literal('user'), Type.Literal('assistant')]),
    content: Type.Union([Type.String(), Type.Array(ContentPart, { minItems: 1 })]),
    name: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

const NotStreamed = Type.Optional(
  Type.Boolean({ description: 'VETTING replies are never streamed; true is rejected, false is accepted for SDK compatibility.' }),
);

export const LightweightVettingBody = Type.Object(
  {
    model: Type.Optional(Type.String({ minLength: 1, description: 'Drafting model id or alias; the configured default when omitted.' })),
    provider: Type.Optional(Type.String({ minLength: 1, description: 'Only for an ambiguous future model id.' })),
    messages: Type.Array(ChatMessage, { minItems: 1, description: 'Chat messages; system message content may be an enc:: value.' }),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    stream: NotStreamed,
    vettingConfig: Type.Optional(
      Type.Object(
        {
          systemPrompt: Type.Optional(Type.String({ minLength: 1, description: 'Guideline the verification pass checks; may be an enc:: value.' })),
          guideline: Type.Optional(Type.String({ minLength: 1, description: 'Optional response policy.' })),
          maxAttempts: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 3; at most the gateway’s vetting.maxAttemptsLimit.' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const ProtectedItemSchema = Type.Object(
  {
    question: Type.Optional(
      Type.Object(
        {
          text: Type.Optional(Type.String({ minLength: 1 })),
          id: Type.Optional(Type.String()),
          subject: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      ),
    ),
    answerKey: Type.Optional(
      Type.Object(
        {
          correctAnswer: Type.Optional(Type.String({ minLength: 1 })),
          keyConcepts: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export const FullVettingBody = Type.Object(
  {
    mode: Type.Union([Type.Literal('vetting'), Type.Literal('chat')]),
    config: Type.Object(
      {
        chatModel: Type.Object(
          {
            modelId: Type.String({ minLength: 1 }),
            temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
            maxTokens: Type.Optional(Type.Integer({ minimum: 1 })),
            topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
          },
          { additionalProperties: false },
        ),
        verificationModel: Type.Optional(
          Type.Object({ modelId: Type.String({ minLength: 1 }) }, { additionalProperties: false, description: 'Required in vetting mode.' }),
        ),
        maxVerificationAttempts: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 3; at most the gateway’s vetting.maxAttemptsLimit.' })),
      },
      { additionalProperties: false },
    ),
    prompts: Type.Object(
      {
        chatSystemPrompt: Type.Optional(Type.String({ minLength: 1, description: 'Defaults to a guided-tutor prompt; may be an enc:: value.' })),
        verificationSystemPrompt: Type.Optional(
          Type.String({ minLength: 1, description: 'Defaults to one built from the chat prompt and context.items; may be an enc:: value.' }),
        ),
      },
      { additionalProperties: false },
    ),
    context: Type.Optional(
      Type.Object(
        {
          sessionId: Type.Optional(Type.String()),
          userId: Type.Optional(Type.String()),
          items: Type.Optional(Type.Array(ProtectedItemSchema, { description: 'Required in vetting mode.' })),
        },
        { additionalProperties: false },
      ),
    ),
    messages: Type.Array(ChatMessage, { minItems: 1, description: 'The conversation, ending with the student’s latest message.' }),
    stream: NotStreamed,
  },
  { additionalProperties: false },
);

export type ChatMessageInput = Static<typeof ChatMessage>;
export type LightweightVettingRequest = Static<typeof LightweightVettingBody>;
export type FullVettingRequest = Static<typeof FullVettingBody>;
