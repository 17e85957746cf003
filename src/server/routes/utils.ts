import { Type } from '@sinclair/typebox';
import { projectOf } from '../../keys/index.js';
import { heldTo } from '../../limits/index.js';
import type { RequestCall } from '../../calls/index.js';
import type { RouteModule } from '../app.js';
import { noStore } from './admin-scope.js';
import { admit, MODEL_ROUTE_SCHEMA } from './model-call.js';

const EncryptBody = Type.Object(
  { text: Type.String({ description: 'Plain text to encrypt (e.g. a VETTING system prompt).' }) },
  { additionalProperties: false },
);
const EncryptResponse = Type.Object({
  encryptedText: Type.String({ description: 'An enc:: value: AES-256-GCM, tagged with the id of the key that sealed it, bound to the project of the calling key.' }),
});
const DecryptBody = Type.Object(
  { encryptedText: Type.String({ description: 'An enc:: value returned by POST /v1/utils/encrypt.' }) },
  { additionalProperties: false },
);
const DecryptResponse = Type.Object({ text: Type.String() });

const UTILITY_SCHEMA = { tags: ['utilities'], security: MODEL_ROUTE_SCHEMA.security };

// Spec logging rule 5: standalone encryption-utility payloads are never stored as raw content.
const REDACTED = '[redacted: encryption utility payload]';

/** Logs the call as a utility call whose one request field and one response field are redacted. */
function recordRedacted(call: RequestCall, requestField: string, responseField: string): void {
  call.describe({ mode: 'utility', payload: { [requestField]: REDACTED } });
  call.answered({ payload: { [responseField]: REDACTED } });
}

/**
 * A utility call counts against the per-minute limit like every keyed call (docs/limits.md), but
 * uses no tokens and costs nothing, so a key over its token or cost cap still encrypts.
 */
const NO_USAGE = { tokens: 0, costUsd: null };

/** POST /v1/utils/encrypt and /v1/utils/decrypt (scope utils:crypto). */
export const utilsRoutes: RouteModule = (app, context) => {
  const { keyring } = context;

  app.post(
    '/v1/utils/encrypt',
    {
      config: { scope: 'utils:crypto' },
      onRequest: noStore,
      schema: {
        summary: 'Encrypt text into an enc:: value',
        description: 'The value can be sent in the VETTING prompt fields that accept enc:: values; the gateway decrypts it there.',
        ...UTILITY_SCHEMA,
        body: EncryptBody,
        response: { 200: EncryptResponse },
      },
    },
    async (request, reply) => {
      recordRedacted(request.call, 'text', 'encryptedText');
      await admit(request, reply, NO_USAGE, heldTo(request.principal, 'per-minute'));
      return { encryptedText: keyring.encrypt(request.body.text, projectOf(request.principal)) };
    },
  );

  app.post(
    '/v1/utils/decrypt',
    {
      config: { scope: 'utils:crypto' },
      onRequest: noStore,
      schema: {
        summary: 'Decrypt an enc:: value',
        description: 'Values sealed for this project with the current key or a previous key (previousEncryptionKeys) decrypt; altered or foreign values, and values of another project, are a 400.',
        ...UTILITY_SCHEMA,
        body: DecryptBody,
        response: { 200: DecryptResponse },
      },
    },
    async (request, reply) => {
      recordRedacted(request.call, 'encryptedText', 'text');
      await admit(request, reply, NO_USAGE, heldTo(request.principal, 'per-minute'));
      return { text: keyring.decrypt(request.body.encryptedText, 'encryptedText', projectOf(request.principal)) };
    },
  );
};
