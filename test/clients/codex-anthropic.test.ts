import { clientSuite } from './harness/client-suite.js';

/* Codex (`codex exec`, a model provider with wire_api = "responses") through the gateway on a Claude model. */
clientSuite('codex', 'anthropic');
