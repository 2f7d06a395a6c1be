import { describe, expect, it } from 'vitest';
import { nameKey } from '../../src/domain/name-words.ts';
import {
  type Described,
  type MatchOptions,
  type MatchResult,
  matchByName,
  normaliseForMatching,
} from '../../src/mcp/name-matching.ts';
import { typoBudget, wordSimilarity } from '../../src/mcp/word-similarity.ts';

describe('normaliseForMatching', () => {
  it('drops accents, lower-cases and splits on anything that is not a letter or digit', () => {
    expect(normaliseForMatching('Chloé Martin')).toEqual(['chloe', 'martin']);
    expect(normaliseForMatching('  SØREN   Ñúñez ')).toEqual(['søren', 'nunez']);
    expect(normaliseForMatching('Cut & blow-dry')).toEqual(['cut', 'and', 'blow', 'dry']);
    expect(normaliseForMatching('cut&blow dry')).toEqual(['cut', 'and', 'blow', 'dry']);
    expect(normaliseForMatching("O'Brien, 2nd floor")).toEqual(['o', 'brien', '2nd', 'floor']);
    expect(normaliseForMatching('  -- & ')).toEqual(['and']);
    expect(normaliseForMatching(' ... ')).toEqual([]);
    expect(normaliseForMatching('')).toEqual([]);
  });

  it('drops the filler words a caller wraps a name in', () => {
    expect(normaliseForMatching('a cut, please')).toEqual(['cut']);
    expect(normaliseForMatching('just my usual colour')).toEqual(['usual', 'colour']);
    expect(normaliseForMatching('The Barber Shop')).toEqual(['barber', 'shop']);
  });

  it('makes plurals singular, lightly', () => {
    expect(normaliseForMatching('nails lashes brushes beaches waxes glasses')).toEqual([
      'nail',
      'lash',
      'brush',
      'beach',
      'wax',
      'glass',
    ]);
    expect(normaliseForMatching('eyebrows highlights')).toEqual(['eyebrow', 'highlight']);
    expect(normaliseForMatching('beauties ties')).toEqual(['beauty', 'tie']);
    expect(normaliseForMatching('lotus iris glass gas')).toEqual(['lotus', 'iris', 'glass', 'gas']);
  });

  it('makes American spellings British, before and after the singular', () => {
    expect(normaliseForMatching('Color colors colour colours')).toEqual([
      'colour',
      'colour',
      'colour',
      'colour',
    ]);
    expect(normaliseForMatching('Gray center favorite')).toEqual(['grey', 'centre', 'favourite']);
    expect(normaliseForMatching('centers centres')).toEqual(['centre', 'centre']);
    expect(
      normaliseForMatching('Keratin straightening: personalize, personalizing, personalization'),
    ).toEqual(['keratin', 'straightening', 'personalise', 'personalising', 'personalisation']);
    expect(normaliseForMatching('organizations organisations')).toEqual(['organisation', 'organisation']);
  });

  it("keeps a possessive 's with its word", () => {
    expect(normaliseForMatching("men's cut")).toEqual(['men', 'cut']);
    expect(normaliseForMatching('mens cut')).toEqual(['men', 'cut']);
    expect(normaliseForMatching('Ladies’ cut')).toEqual(['lady', 'cut']);
  });
});

describe('nameKey', () => {
  it('runs the words together, so spacing and hyphens do not count', () => {
    expect(nameKey('Blow-dry')).toBe('blowdry');
    expect(nameKey('blow dry')).toBe('blowdry');
    expect(nameKey('BLOWDRY')).toBe('blowdry');
    expect(nameKey('Hair colours')).toBe(nameKey('hair color'));
    expect(nameKey(' the - ')).toBe('');
  });
});

describe('wordSimilarity', () => {
  it('allows no typo up to two letters, one up to five, two beyond', () => {
    expect([1, 2, 3, 5, 6, 12].map(typoBudget)).toEqual([0, 0, 1, 1, 2, 2]);
    expect(wordSimilarity('okafur', 'okafor')).toBeGreaterThan(0.9);
    expect(wordSimilarity('okafro', 'okafor')).toBeGreaterThan(0.9); // two letters swapped: one typo
    expect(wordSimilarity('colur', 'colour')).toBeGreaterThan(0.9);
    expect(wordSimilarity('okfur', 'okafor')).toBeGreaterThan(0.8); // two typos in six letters
    expect(wordSimilarity('ofkaur', 'okafor')).toBeLessThan(0.9);
    expect(wordSimilarity('cop', 'cup')).toBeGreaterThan(0);
    expect(wordSimilarity('ox', 'ax')).toBe(0); // two letters: no typo allowed
    expect(wordSimilarity('perm', 'trim')).toBe(0); // two typos in four letters
  });

  it('takes sound-alikes beyond the typo budget (Double Metaphone), not mere look-alikes', () => {
    expect(wordSimilarity('kloey', 'chloe')).toBeGreaterThanOrEqual(0.85);
    expect(wordSimilarity('culler', 'colour')).toBeGreaterThanOrEqual(0.85);
    expect(wordSimilarity('shivon', 'siobhan')).toBe(0);
    expect(wordSimilarity('dev', 'ben')).toBe(0);
  });

  it('takes a start of three letters or more, and a lone initial', () => {
    expect(wordSimilarity('consult', 'consultation')).toBe(0.9);
    expect(wordSimilarity('co', 'colour')).toBe(0);
    expect(wordSimilarity('o', 'okafor')).toBe(0.8);
    expect(wordSimilarity('x', 'okafor')).toBe(0);
    expect(wordSimilarity('same', 'same')).toBe(1);
  });
});

interface Item {
  id: string;
  name: string;
  aliases?: string[];
  online?: boolean;
}

const describe_ = (item: Item): Described => ({ id: item.id, names: [item.name], aliases: item.aliases });

/** The demo salon's services with their catalogue aliases; the consultation is booked in person only. */
const SERVICES: Item[] = [
  { id: 'svc_cut', name: 'Cut & blow-dry', aliases: ['cut', 'haircut', 'trim', 'blow dry', 'mens cut'] },
  { id: 'svc_colour', name: 'Full colour', aliases: ['colour', 'tint'] },
  { id: 'svc_beard', name: 'Beard trim', aliases: ['beard'] },
  { id: 'svc_consult', name: 'Colour consultation', aliases: ['patch test'], online: false },
];
/** The same services without aliases: what a catalogue that gives none gets. */
const BARE = SERVICES.map(({ aliases: _aliases, ...service }) => service);
const AS_SERVICES: MatchOptions<Item> = { partial: 'confirm', offerable: (item) => item.online !== false };

const STAFF: Item[] = [
  { id: 'stf_1', name: 'Amara Okafor' },
  { id: 'stf_2', name: 'Chloé Martin' },
  { id: 'stf_3', name: 'Chloe Dubois' },
  { id: 'stf_4', name: 'Sam Martin' },
  { id: 'stf_5', name: 'Benedict Carter', aliases: ['Ben'] },
];
const AS_STAFF: MatchOptions<Item> = { partial: 'match' };

/** A result in a line: "match Full colour (exact)", "ambiguous A | B (partial)", "none; closest A | B". */
function read(result: MatchResult<Item>): string {
  if (result.kind === 'match') return `match ${result.item.name} (${result.fit})`;
  if (result.kind === 'ambiguous')
    return `ambiguous ${result.choices.map((c) => c.name).join(' | ')} (${result.fit})`;
  return `none; closest ${result.closest.map((c) => c.name).join(' | ')}`;
}

const service = (query: string, items = SERVICES) => read(matchByName(query, items, describe_, AS_SERVICES));
const staff = (query: string) => read(matchByName(query, STAFF, describe_, AS_STAFF));

describe('matchByName: ids and exact names', () => {
  it('takes an id, whatever its case and surrounding space, before any name', () => {
    expect(service(' SVC_Consult ')).toBe('match Colour consultation (id)');
    const named = [
      { id: 'a', name: 'Colour' },
      { id: 'colour', name: 'Something else' },
    ];
    expect(read(matchByName('colour', named, describe_))).toBe('match Something else (id)');
  });

  it('matches a name or an alias whatever its case, accents, spacing, hyphens and plurals', () => {
    expect(service('cut and blow dry')).toBe('match Cut & blow-dry (exact)');
    expect(service('CUT & BLOWDRY')).toBe('match Cut & blow-dry (exact)');
    expect(service('full color')).toBe('match Full colour (exact)');
    expect(service('beard trims')).toBe('match Beard trim (exact)');
    expect(staff('chloe martin')).toBe('match Chloé Martin (exact)');
  });

  it('reads everyday words through the aliases, not through a list in the code', () => {
    expect(service('haircut')).toBe('match Cut & blow-dry (exact)');
    expect(service('hair cut')).toBe('match Cut & blow-dry (exact)');
    expect(service('a haircut, please')).toBe('match Cut & blow-dry (exact)');
    expect(service('blowdry')).toBe('match Cut & blow-dry (exact)');
    expect(service("men's cut")).toBe('match Cut & blow-dry (exact)');
    expect(service('colour')).toBe('match Full colour (exact)');
    expect(service('tints')).toBe('match Full colour (exact)');
    expect(staff('ben')).toBe('match Benedict Carter (exact)');
    // Without the aliases the same words are at best a word of a longer name, or nothing.
    expect(service('haircut', BARE)).toBe('ambiguous Cut & blow-dry (partial)');
    expect(service('colour', BARE)).toBe('ambiguous Full colour (partial)');
  });

  it('does not let an alias hide another service whose name has the same word ("trim")', () => {
    expect(service('trim')).toBe('ambiguous Cut & blow-dry | Beard trim (exact)');
    // Where no other service has the word, the alias decides.
    expect(service('trim', SERVICES.slice(0, 2))).toBe('match Cut & blow-dry (exact)');
    // Without the alias, the word of "Beard trim" is only offered, never taken.
    expect(service('trim', BARE)).toBe('ambiguous Beard trim (partial)');
  });

  it('reports several names that read the same as ambiguous', () => {
    const twins = [
      { id: 'a', name: 'Chloé Martin' },
      { id: 'b', name: 'chloe martin' },
    ];
    expect(read(matchByName('Chloe Martin', twins, describe_))).toBe(
      'ambiguous Chloé Martin | chloe martin (exact)',
    );
  });
});

describe('matchByName: typos and sound-alikes', () => {
  it('forgives a slip in a whole name, and takes it when nothing else is as close', () => {
    expect(staff('Amara Okafur')).toBe('match Amara Okafor (close)');
    expect(staff('Amra Okafor')).toBe('match Amara Okafor (close)');
    expect(staff('okafor amara')).toBe('match Amara Okafor (exact)');
    expect(staff('Amara O')).toBe('match Amara Okafor (close)');
    expect(staff('Kloey Martin')).toBe('match Chloé Martin (close)');
    expect(staff('Kloey')).toBe('ambiguous Chloé Martin | Chloe Dubois (partial)');
    expect(service('colur')).toBe('match Full colour (close)');
    expect(service('blowdri')).toBe('match Cut & blow-dry (close)');
    expect(service('haircutt')).toBe('match Cut & blow-dry (close)');
  });

  it('asks when two names are equally close', () => {
    const pair = [
      { id: 'a', name: 'Jon Smith' },
      { id: 'b', name: 'Jan Smith' },
    ];
    expect(read(matchByName('Jen Smith', pair, describe_, AS_STAFF))).toBe(
      'ambiguous Jon Smith | Jan Smith (close)',
    );
  });

  it('ranks exact and alias matches above slips', () => {
    const near = [
      { id: 'a', name: 'Tint' },
      { id: 'b', name: 'Toner', aliases: ['tent'] },
    ];
    expect(read(matchByName('tint', near, describe_))).toBe('match Tint (exact)');
    expect(read(matchByName('tent', near, describe_))).toBe('match Toner (exact)');
  });

  it('does not take what is beyond the typo budget and does not sound alike', () => {
    expect(service('perm')).toMatch(/^none; closest [^|]+ \| [^|]+ \| [^|]+$/);
    expect(staff('Zed')).toMatch(/^none; closest /);
    expect(staff('Siobhan')).toMatch(/^none; closest /);
  });
});

describe('matchByName: parts of names', () => {
  it('takes a lone first or last name of a person, and asks when several have it', () => {
    expect(staff('amara')).toBe('match Amara Okafor (partial)');
    expect(staff('Okafor')).toBe('match Amara Okafor (partial)');
    expect(staff('ama oka')).toBe('match Amara Okafor (partial)');
    expect(staff('Chloé')).toBe('ambiguous Chloé Martin | Chloe Dubois (partial)');
    expect(staff('martin')).toBe('ambiguous Chloé Martin | Sam Martin (partial)');
  });

  it('offers a word of a service name for confirmation instead of taking it', () => {
    expect(service('blow-dry', BARE)).toBe('ambiguous Cut & blow-dry (partial)');
    expect(service('beard', BARE)).toBe('ambiguous Beard trim (partial)');
    expect(service('ladies haircut')).toBe('ambiguous Cut & blow-dry (partial)');
    expect(service('col')).toBe('ambiguous Full colour (partial)');
    expect(service('co')).toMatch(/^none; /);
  });
});

describe('matchByName: what may be offered', () => {
  it('never offers a service booked only in person, but answers with it when it is named', () => {
    expect(service('consultation')).toBe('match Colour consultation (partial)');
    expect(service('colour consult')).toBe('match Colour consultation (partial)');
    expect(service('patch tests')).toBe('match Colour consultation (exact)');
    expect(service('colour', BARE)).toBe('ambiguous Full colour (partial)');
    expect(service('colour conslutation')).toBe('match Colour consultation (close)');
    for (const query of ['perm', 'colour', 'col', 'trim', 'zzz']) {
      const result = matchByName(query, BARE, describe_, AS_SERVICES);
      const offered =
        result.kind === 'ambiguous' ? result.choices : result.kind === 'none' ? result.closest : [];
      expect(
        offered.map((s) => s.name),
        query,
      ).not.toContain('Colour consultation');
    }
  });

  it('offers at most three choices, closest first', () => {
    const many = ['Gel nails', 'Acrylic nails', 'Nail art', 'Nail repair', 'Nail removal'].map((name, i) => ({
      id: `n${i}`,
      name,
    }));
    const result = matchByName('nails', many, describe_, AS_SERVICES);
    // Equally good: in the order given.
    expect(read(result)).toBe('ambiguous Gel nails | Acrylic nails | Nail art (partial)');
    expect(read(matchByName('nail rep', many, describe_, AS_SERVICES))).toBe(
      'ambiguous Nail repair (partial)',
    );
    expect(read(matchByName('nail re', many, describe_, AS_SERVICES))).toMatch(/^none; /);
    expect(read(matchByName('nail polish', many, describe_, { ...AS_SERVICES, limit: 2 }))).toMatch(
      /^ambiguous [^|]+\|[^|]+ \(partial\)$|^none; closest [^|]+\|[^|]+$/,
    );
    const unknown = matchByName('massage', many, describe_, AS_SERVICES);
    expect(unknown.kind === 'none' && unknown.closest.length).toBe(3);
  });

  it('finds nothing for an empty query or no items', () => {
    expect(service('')).toBe('none; closest ');
    expect(service('  - ')).toBe('none; closest ');
    expect(read(matchByName('cut', [], describe_))).toBe('none; closest ');
  });
});
