/**
 * The page's own fetch and WebSocket as they were when the library loaded, before any
 * interceptor or socket shim patched them: a mirrored Pieces OS is reached with these, never
 * through the service itself (whose bases it usually shares).
 */
export const nativeFetch: typeof fetch | undefined = typeof fetch === 'function' ? fetch.bind(globalThis) : undefined;
export const NativeWebSocket: typeof WebSocket | undefined = typeof WebSocket === 'function' ? WebSocket : undefined;
