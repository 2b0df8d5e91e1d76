// A PWA whose own service worker (src/sw.js, built by vite-plugin-pwa's
// injectManifest) also answers the Pieces OS API.
import { defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';

export default defineConfig({
  // The worker's imports are pre-bundled at start-up with the page's. Otherwise the dev server
  // finds them only when the worker asks for them, re-bundles, and reloads the page while the
  // worker installs: a worker that then fails to install never controls the page.
  // (workbox-window is imported by the plugin's virtual register module, which the scan does not see.)
  optimizeDeps: { entries: ['index.html', 'src/sw.js'], include: ['workbox-window'] },
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
