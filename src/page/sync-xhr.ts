/**
 * Keeps synchronous XMLHttpRequest native in page mode: the interceptor answers on a later tick,
 * which a synchronous request cannot wait for.
 */
type Xhr = XMLHttpRequest & Record<PropertyKey, unknown>;

export function keepSyncXhrNative(target: { XMLHttpRequest: typeof XMLHttpRequest }, Native: typeof XMLHttpRequest): () => void {
  const Intercepted = target.XMLHttpRequest;
  const Wrapped = new Proxy(Intercepted, {
    construct(_target, args) {
      const intercepted = Reflect.construct(Intercepted, args) as Xhr;
      let native: Xhr | null = null;
      // What the caller did before open(): replayed on the native request if it is synchronous.
      const before: Array<(xhr: Xhr) => void> = [];
      const current = () => native ?? intercepted;
      return new Proxy(intercepted, {
        get(_object, key) {
          if (key === 'open') {
            return (method: string, url: string | URL, async = true, ...rest: unknown[]) => {
              if (async === false && !native) {
                native = new Native() as Xhr;
                for (const replay of before) replay(native);
              }
              return (current().open as (...a: unknown[]) => void)(method, url, async, ...rest);
            };
          }
          const object = current();
          const value = Reflect.get(object, key, object);
          if (typeof value !== 'function') return value;
          if (key === 'addEventListener' && !native) {
            return (...a: unknown[]) => {
              before.push((xhr) => (xhr.addEventListener as (...b: unknown[]) => void)(...a));
              return (value as (...b: unknown[]) => void).apply(object, a);
            };
          }
          return value.bind(object);
        },
        set(_object, key, value) {
          if (!native) before.push((xhr) => Reflect.set(xhr, key, value));
          return Reflect.set(current(), key, value);
        },
      });
    },
  });
  target.XMLHttpRequest = Wrapped;
  return () => {
    if (target.XMLHttpRequest === Wrapped) target.XMLHttpRequest = Intercepted;
  };
}
