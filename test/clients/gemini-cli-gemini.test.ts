import { clientSuite } from './harness/client-suite.js';

/* The Gemini CLI (`gemini -p`, the Gemini API at GOOGLE_GEMINI_BASE_URL) through the gateway on a Gemini model. */
clientSuite('gemini-cli', 'gemini');
