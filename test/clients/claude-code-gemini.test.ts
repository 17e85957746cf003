import { clientSuite } from './harness/client-suite.js';

/* Claude Code (the Messages API: ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, `claude -p`) through the gateway on a Gemini model. */
clientSuite('claude-code', 'gemini');
