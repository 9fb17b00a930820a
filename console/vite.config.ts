import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The console is built into dist/console and served by the gateway at /console/ (no CDN at run time).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
  },
  server: {
    // `npm run dev:console` proxies the JSON routes to a gateway on :8080.
    proxy: { '/console/api': 'http://127.0.0.1:8080', '/admin': 'http://127.0.0.1:8080', '/v1': 'http://127.0.0.1:8080', '/files': 'http://127.0.0.1:8080' },
  },
});
