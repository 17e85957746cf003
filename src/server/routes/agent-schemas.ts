import { Type } from '@sinclair/typebox';
import { Nullable } from './schema-helpers.js';

/**
 * Schemas of the agent run request and response (docs/agents.md,
 * "Running an agent"), shared by the public run route and the admin test route. The request is
 * strict: a run can never carry a graph, a model or overrides.
 */

const TextPart = Type.Object(
  { type: Type.Union([Type.Literal('input_text'), Type.Literal('text'), Type.Literal('output_text')]), text: Type.String() },
  { additionalProperties: false },
);

const ImagePart = Type.Object(
  {
    type: Type.Union([Type.Literal('input_image'), Type.Literal('image_url')]),
    // No maxLength: data URIs are bounded by the route's 12 MiB body limit and the image limits.
    image_url: Type.Union([
      Type.String({ minLength: 1, description: 'https URL or base64 data URI' }),
      Type.Object({ url: Type.String({ minLength: 1 }), detail: Type.Optional(Type.String()) }, { additionalProperties: false }),
    ]),
    filename: Type.Optional(Type.String({ maxLength: 255 })),
    detail: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);

const ContentPart = Type.Union([TextPart, ImagePart]);

const InputMessage = Type.Object(
  {
    type: Type.Optional(Type.Literal('message')),
    role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system'), Type.Literal('developer')]),
    content: Type.Union([Type.String(), Type.Array(ContentPart, { maxItems: 64 })]),
  },
  { additionalProperties: false },
);

export const RunInputFields = {
  input: Type.Optional(
    Type.Union([Type.String(), Type.Array(Type.Union([ContentPart, InputMessage]), { maxItems: 256 })], {
      description: 'the user turn: a string, content parts, or Responses-style messages (the last user message is the turn)',
    }),
  ),
  message: Type.Optional(Type.String({ description: 'text-only alias of input' })),
  messages: Type.Optional(Type.Array(InputMessage, { maxItems: 256, description: 'the last user message supplies the turn' })),
  conversation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'continue a conversation a previous run returned' })),
};

export const AgentRunBody = Type.Object(RunInputFields, { additionalProperties: false });

export const AgentRunResponse = Type.Object({
  object: Type.Literal('agent.run'),
  request_id: Type.String(),
  run_id: Type.String(),
  conversation_id: Type.String(),
  agent: Type.Object({ slug: Type.String(), version: Nullable(Type.Integer()), draft_version: Nullable(Type.Integer()) }),
  test: Type.Boolean(),
  output: Type.Object({
    text: Type.String(),
    attachments: Type.Array(
      Type.Object({ type: Type.Literal('image'), url: Type.String(), asset_id: Type.String(), mime_type: Nullable(Type.String()) }),
    ),
  }),
  usage: Type.Object({
    prompt_tokens: Type.Integer(),
    completion_tokens: Type.Integer(),
    total_tokens: Type.Integer(),
    nodes: Type.Array(
      Type.Object({
        node: Type.String(),
        type: Type.Union([Type.Literal('llm'), Type.Literal('image')]),
        model: Type.String(),
        prompt_tokens: Nullable(Type.Integer()),
        completion_tokens: Nullable(Type.Integer()),
        total_tokens: Nullable(Type.Integer()),
        images: Nullable(Type.Integer()),
      }),
    ),
  }),
  cost: Type.Object({
    total_usd: Nullable(Type.Number()),
    nodes: Type.Array(Type.Object({ node: Type.String(), model: Type.String(), cost_usd: Nullable(Type.Number()) })),
  }),
  input_assets: Type.Array(
    Type.Object({
      asset_id: Type.String(),
      url: Type.String(),
      mime_type: Nullable(Type.String()),
      bytes: Nullable(Type.Integer()),
      sha256: Nullable(Type.String()),
      source: Type.Union([Type.Literal('inline'), Type.Literal('url')]),
    }),
  ),
});

export const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 64 }) });
