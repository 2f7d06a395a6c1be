import type { AppDeps } from '../../src/app/deps.ts';
import { buildApp } from '../../src/http/build-app.ts';

/** The real app listening on a free loopback port, and how to stop it and drop its database. */
export async function listenFullStack(
  deps: AppDeps,
  disposeDatabase: () => Promise<void>,
): Promise<{ origin: string; close: () => Promise<void> }> {
  const app = await buildApp(deps);
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    origin,
    close: async () => {
      await app.close();
      await disposeDatabase();
    },
  };
}
