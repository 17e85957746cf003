import { clientSuite } from './harness/client-suite.js';

/* Claude Code (the Messages API: ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, `claude -p`) through the gateway on an OpenAI model. */
clientSuite('claude-code', 'openai');
