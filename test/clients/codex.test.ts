import { clientSuite } from './harness/client-suite.js';

/* Codex (`codex exec`, a model provider with wire_api = "responses") through the gateway over a model of each vendor. */
clientSuite('codex');
