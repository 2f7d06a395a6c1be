/**
 * The conversation between the bench runner and a server child process:
 * child `hello` (listening now), parent `init` (the setup input), child `ready` (its URLs) or `failed`,
 * and later parent `stop`, after which the child closes everything and exits.
 */
export type ToChild = { type: 'init'; init: unknown } | { type: 'stop' };

export type FromChild =
  | { type: 'hello' }
  | { type: 'ready'; info: unknown }
  | { type: 'failed'; error: string };
