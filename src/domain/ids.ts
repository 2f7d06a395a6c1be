const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** RFC 4122 ids in lowercase, as the contract states for resource ids. */
export function isUuid(value: string): boolean {
  return UUID_SHAPE.test(value);
}
