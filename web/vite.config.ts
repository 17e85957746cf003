import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built by the root package's prepare script into dist/web, which the gateway serves under
// /dashboard/. Asset names carry a content hash, so they can be cached for ever.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    // No inline scripts or data-URL modules: the Content-Security-Policy allows only files of the gateway.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
