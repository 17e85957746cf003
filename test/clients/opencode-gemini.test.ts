import { clientSuite } from './harness/client-suite.js';

/* opencode (`opencode run`, a provider over @ai-sdk/anthropic: the Messages API) through the gateway on a Gemini model. */
clientSuite('opencode', 'gemini');
