import type { FastifyReply, FastifyRequest } from 'fastify';
import { FullVettingBody, FullVettingResponse, LightweightVettingBody, LightweightVettingResponse, type VettingRun } from '../../vetting/index.js';
import type { RouteModule } from '../app.js';
import { isPlaygroundRoute } from '../playground-relay.js';
import { clientGoneSignal, MODEL_ROUTE_SCHEMA } from './model-call.js';

/** Schema fields both routes share. */
const VETTING_SCHEMA = { tags: ['vetting'], security: MODEL_ROUTE_SCHEMA.security };

function runOf(request: FastifyRequest, reply: FastifyReply): VettingRun {
  return { call: request.call, principal: request.principal, signal: clientGoneSignal(reply) };
}

/** POST /v1/chat/vetting and POST /v1/vetting/full (scope model:request): the VETTING service (src/vetting) answers. */
export const vettingRoutes: RouteModule = (app, context) => {
  const { vetting } = context;

  app.post(
    '/v1/chat/vetting',
    {
      config: { scope: 'model:request' },
      schema: {
        summary: 'Chat with a verification pass (lightweight VETTING)',
        description:
          'Drafts a reply with `model`, has the internal verification model check it against vettingConfig, and redrafts with feedback until it passes or maxAttempts is used. Fails closed: without a pass the reply is the configured fallback message. Never streams.',
        ...VETTING_SCHEMA,
        body: LightweightVettingBody,
        response: { 200: LightweightVettingResponse },
      },
    },
    async (request, reply) => {
      const answer = await vetting.lightweight(runOf(request, reply), request.body, { withAttempts: isPlaygroundRoute(request.routeOptions.url) });
      reply.headers(answer.admission.headers);
      return answer.reply;
    },
  );

  app.post(
    '/v1/vetting/full',
    {
      config: { scope: 'model:request' },
      schema: {
        summary: 'Answer-key VETTING',
        description:
          'mode "vetting": drafts with config.chatModel, checks every draft against context.items (answer keys) locally and with config.verificationModel, and redrafts until a draft passes; fails closed with the configured fallback. mode "chat": one draft, no verification. Never streams.',
        ...VETTING_SCHEMA,
        body: FullVettingBody,
        response: { 200: FullVettingResponse },
      },
    },
    async (request, reply) => {
      const answer = await vetting.full(runOf(request, reply), request.body);
      reply.headers(answer.admission.headers);
      return answer.reply;
    },
  );
};
