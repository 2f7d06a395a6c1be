import { nameKey } from '../../../domain/name-words.ts';
import { formatPath, type Report } from '../format/problems.ts';
import type { Indexed } from './parsed.ts';

/**
 * Aliases must tell entities apart the way the MCP tools read names (src/domain/name-words.ts: case,
 * accents, spacing, hyphens, plurals and filler words do not count): an alias that reads like its
 * own name, like another alias of the same entity, or like another entity's name or alias of the
 * same kind would make a caller's word mean two things, so the file is refused at that alias.
 */
export function checkAliases(
  kind: 'services' | 'staff',
  entities: readonly Indexed<{ name: string; aliases: readonly string[] }>[],
  report: Report,
): void {
  const noun = kind === 'services' ? 'service' : 'staff member';
  const names = new Map<string, number>();
  for (const { index, value } of entities) {
    const key = nameKey(value.name);
    if (key !== '' && !names.has(key)) names.set(key, index);
  }
  /** Where each alias key was first given: the entity and the alias's place in its list. */
  const taken = new Map<string, { index: number; position: number }>();
  for (const { index, value } of entities) {
    const own = nameKey(value.name);
    value.aliases.forEach((alias, position) => {
      const path = [kind, index, 'aliases', position];
      const key = nameKey(alias);
      const named = names.get(key);
      const first = taken.get(key);
      if (key === '') {
        report(path, 'has no word to match (only punctuation or words such as "the")');
      } else if (key === own) {
        report(path, `reads the same as the ${noun}'s own name`);
      } else if (named !== undefined) {
        report(path, `reads the same as the name of ${formatPath([kind, named])}`);
      } else if (first !== undefined) {
        const at = formatPath([kind, first.index, 'aliases', first.position]);
        report(path, `reads the same as ${at} (case, accents, spaces and plurals do not count)`);
      } else {
        taken.set(key, { index, position });
      }
    });
  }
}
