import { clientSuite } from './harness/client-suite.js';

/*
 * Claude Code (the Messages API, ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN) through the
 * gateway over a model of each vendor, and on its own default model (a Claude model newer
 * than the catalog, served by its prefix and so without a price).
 */
clientSuite('claude-code', [{ vendor: 'anthropic', priced: false }]);
