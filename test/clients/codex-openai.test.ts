import { clientSuite } from './harness/client-suite.js';

/*
 * Codex (`codex exec`, a model provider with wire_api = "responses") through the gateway on an
 * OpenAI model, and with the Responses WebSocket mode asked for (supports_websockets): the
 * gateway answers the upgrade 426 and Codex goes on over HTTP.
 */
clientSuite('codex', 'openai', { websockets: true });
