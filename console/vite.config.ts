import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The console is built into dist/console and served by the gateway at /console/ (no CDN at run time).
// `npm run dev:console` forwards the JSON routes to a gateway on this machine: on :8080, or on the
// PORT that gateway was given.
const gateway = `http://127.0.0.1:${process.env.PORT || 8080}`;
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
  },
  server: {
    proxy: { '/console/api': gateway, '/admin': gateway, '/v1': gateway, '/files': gateway },
  },
});
