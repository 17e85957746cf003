import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/index.js';
import { SECRET_PREFIX } from '../keys/index.js';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * The admin API's only credential is the admin token, sent as `Authorization: Bearer …`.
 * Model API keys are never accepted here (and the admin token is never a model key, since
 * the key cache only knows `sk-mg-` secrets). A signed-in dashboard session does not exist yet.
 */
export function adminAuthHook(adminToken: string): (request: FastifyRequest) => Promise<void> {
  // Comparing fixed-length digests keeps the comparison constant-time whatever was sent.
  const expected = digest(adminToken);
  return async (request) => {
    const authorization = request.headers.authorization;
    if (authorization === undefined || authorization.length === 0) {
      throw new GatewayError(
        'missing_api_key',
        'The admin API needs the admin token as "Authorization: Bearer <admin token>" (MODELGATE_ADMIN_TOKEN, or the admin-token file in the data dir).',
      );
    }
    const token = /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? '';
    if (token.startsWith(SECRET_PREFIX)) {
      throw new GatewayError('invalid_api_key', 'Model API keys (sk-mg-…) are not accepted by the admin API; send the admin token instead.');
    }
    if (!timingSafeEqual(digest(token), expected)) {
      throw new GatewayError('invalid_api_key', 'The admin token is not valid. Send the token the gateway was started with.');
    }
  };
}
