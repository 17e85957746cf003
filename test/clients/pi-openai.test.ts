import { clientSuite } from './harness/client-suite.js';

/* pi (`pi -p`, a provider with api "openai-completions": chat completions) through the gateway on an OpenAI model. */
clientSuite('pi', 'openai');
