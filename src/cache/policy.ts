import { Type, type Static } from '@sinclair/typebox';

/**
 * A cache policy of the configuration (`cache:` list, decisions §14): which requests it
 * applies to, where their answers are kept (the namespace) and for how long. The first policy
 * that applies to a request is the one used; a request no policy applies to is never cached.
 */
export const CachePolicySchema = Type.Object(
  {
    name: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$', maxLength: 64, description: 'shown in the metrics and the request record' }),
    apply: Type.Object(
      {
        projects: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'project ids whose requests are cached' }),
        keys: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'key ids whose requests are cached' }),
        models: Type.Array(Type.String({ minLength: 1 }), { default: [], description: 'catalog ids (after alias resolution); empty = every model of the projects or keys' }),
        all: Type.Boolean({ default: false, description: 'every request (still limited to `models` when given)' }),
      },
      { additionalProperties: false, default: {} },
    ),
    mode: Type.Union([Type.Literal('exact'), Type.Literal('semantic')], { default: 'exact' }),
    namespace: Type.Union([Type.Literal('project'), Type.Literal('key')], { default: 'project', description: 'who shares cached answers: the project (default) or each key alone' }),
    ttlSeconds: Type.Integer({ minimum: 1, maximum: 31 * 86_400, default: 3600, description: 'how long an answer is kept' }),
    maxEntries: Type.Integer({ minimum: 1, maximum: 10_000_000, default: 10_000, description: 'answers kept per namespace; the least recently used goes first' }),
    maxBytes: Type.Integer({ minimum: 1, default: 64 * 1024 * 1024, description: 'bytes of answers kept per namespace; the least recently used go first' }),
    maxEntryBytes: Type.Integer({ minimum: 1, default: 1024 * 1024, description: 'largest answer kept (bytes of JSON); a larger one is not cached' }),
    semantic: Type.Optional(
      Type.Object(
        {
          embeddingModel: Type.String({ minLength: 1 }),
          threshold: Type.Number({ minimum: 0, maximum: 1, default: 0.95 }),
        },
        { additionalProperties: false },
      ),
    ),
    onlyDeterministic: Type.Boolean({ default: true, description: 'cache only requests with temperature 0 (embeddings always); false: every request' }),
    storeFalse: Type.Boolean({ default: false, description: 'also cache requests that say store: false' }),
    media: Type.Boolean({ default: false, description: 'also cache requests that carry images, audio or files' }),
    toolResults: Type.Boolean({ default: false, description: 'also cache requests that carry tool results' }),
  },
  { additionalProperties: false },
);

export type CachePolicy = Static<typeof CachePolicySchema>;

/** Who a request is from, as a policy's `apply` and the namespace read it. */
export interface CacheCaller {
  /** null: an anonymous caller of the migration window. */
  keyId: string | null;
  projectId: string | null;
}

/** The first policy that applies to a caller's request for a model, or undefined. */
export function policyFor(policies: readonly CachePolicy[], caller: CacheCaller, model: string): CachePolicy | undefined {
  return policies.find((policy) => {
    const { apply } = policy;
    if (apply.models.length > 0 && !apply.models.includes(model)) return false;
    if (apply.all) return true;
    return (caller.projectId !== null && apply.projects.includes(caller.projectId)) || (caller.keyId !== null && apply.keys.includes(caller.keyId));
  });
}

/** The namespace of a project's answers; a key's own namespace is inside it (`project:<id>:key:<id>`), so clearing a project clears both. */
export function projectNamespace(projectId: string): string {
  return `project:${projectId}`;
}

/**
 * The namespace a caller's answers are kept in: its project's, or its key's alone. Anonymous
 * callers share one namespace of their own, which no key's requests ever read.
 */
export function namespaceOf(policy: CachePolicy, caller: CacheCaller): string {
  if (caller.keyId === null) return 'anonymous';
  const project = projectNamespace(caller.projectId ?? '');
  return policy.namespace === 'key' ? `${project}:key:${caller.keyId}` : project;
}
