// A PWA whose own service worker (src/sw.js, built by vite-plugin-pwa's
// injectManifest) also answers the Pieces OS API.
import { defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';

export default defineConfig({
  plugins: [
    VitePWA({
      strategies: 'injectManifest',
      srcDir: 'src',
      filename: 'sw.js',
      injectRegister: false,
      manifest: { name: 'Pieces OS worker in a PWA', short_name: 'Pieces PWA', icons: [] },
      // The service worker in development too (served as /dev-sw.js?dev-sw, an ES module).
      devOptions: { enabled: true, type: 'module' },
    }),
  ],
});
