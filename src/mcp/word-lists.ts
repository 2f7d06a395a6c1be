/** Names joined as said: "Amara", "Amara and Ben", "Amara, Ben or Chloé" ('and' or 'or' last). */
export function listed(names: readonly string[], word: 'and' | 'or' = 'and'): string {
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} ${word} ${names[names.length - 1]}`;
}
