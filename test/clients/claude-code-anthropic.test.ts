import { clientSuite } from './harness/client-suite.js';

/* Claude Code (the Messages API: ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, `claude -p`) through the gateway on a Claude model and on its own default model (a Claude model newer than the catalog, served by its prefix and so without a price). */
clientSuite('claude-code', 'anthropic', { defaultModel: { priced: false } });
