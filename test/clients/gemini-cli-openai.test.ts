import { clientSuite } from './harness/client-suite.js';

/* The Gemini CLI (`gemini -p`, the Gemini API at GOOGLE_GEMINI_BASE_URL) through the gateway on an OpenAI model. */
clientSuite('gemini-cli', 'openai');
