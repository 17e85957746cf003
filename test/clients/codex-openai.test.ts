import { clientSuite } from './harness/client-suite.js';

/* Codex (`codex exec`, a model provider with wire_api = "responses") through the gateway on an OpenAI model. */
clientSuite('codex', 'openai');
