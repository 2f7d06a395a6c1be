/**
 * `load`, run when first asked for rather than at start (what a server never uses, it never holds):
 * once for everyone who asks while it runs and after it succeeded; a failure goes to those who asked,
 * and the next to ask loads again.
 */
export function onDemand<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}
