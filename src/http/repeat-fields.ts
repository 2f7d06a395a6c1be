import { REPEAT_LIMITS, type Repeat, SERIES_VISITS, type SeriesVisits } from '../domain/booking/series.ts';
import { AppError } from '../domain/errors.ts';
import { esc, type FieldRefusal, refusalBeside, refusedState } from './pages/page-shell.ts';

/** The repeat fields as a form sent them (a refused form comes back with them as they were). */
export interface RepeatForm {
  repeat_every_weeks?: string | undefined;
  repeat_count?: string | undefined;
}

/**
 * The form fields that book a recurring series (design.md 9.5) on the public page and in the console:
 * "Repeat every N weeks" (or not at all) and how many visits in all, within `visits` (its label and
 * its bounds; repeatOf refuses a count outside them in the same words). `kept`, a refused form's
 * values, chosen again as the other fields are filled again (an emptied count comes back empty).
 * `refused`: a refusal of one of these two fields (its param), said beside it, which is marked
 * invalid, described by it and focused, as the form's other fields are (page-shell.ts refusalBeside),
 * on the public page and in the console alike.
 */
export function repeatFieldset(
  options: {
    visits?: SeriesVisits;
    kept?: RepeatForm | undefined;
    refused?: FieldRefusal | undefined;
    /** The class the page shows a refusal in: the public pages' "fee" unless told (the console's "error"). */
    refusalStyle?: string;
  } = {},
): string {
  const { visits = SERIES_VISITS, kept = {}, refused, refusalStyle } = options;
  const { everyWeeks } = REPEAT_LIMITS;
  const chosen = kept.repeat_every_weeks ?? '';
  const offered = Array.from({ length: everyWeeks.max - everyWeeks.min + 1 }, (_, i) => i + everyWeeks.min);
  const repeats = offered.some((n) => String(n) === chosen);
  const weeks = offered
    .map(
      (n) =>
        `<option value="${n}"${String(n) === chosen ? ' selected' : ''}>Every ${n === 1 ? 'week' : `${n} weeks`}</option>`,
    )
    .join('');
  const count = kept.repeat_count ?? String(Math.min(6, visits.max));
  const every = 'repeat_every_weeks';
  const many = 'repeat_count';
  return `<fieldset><legend>Repeat</legend>
<label for="${every}">Repeat</label>
${refusalBeside(refused, every, every, refusalStyle)}<select id="${every}" name="${every}"${refusedState(refused, every, every)}><option value=""${repeats ? '' : ' selected'}>Does not repeat</option>${weeks}</select>
<label for="${many}">Visits in all, this one included (${visits.min} to ${visits.max})</label>
${refusalBeside(refused, many, many, refusalStyle)}<input id="${many}" name="${many}" type="number" min="${visits.min}" max="${visits.max}" value="${esc(count)}"${refusedState(refused, many, many)}>
</fieldset>`;
}

/**
 * The series a form asks for, or undefined for one that does not repeat; 400 for numbers out of
 * bounds, a count outside `visits` (or none) in its own words.
 */
export function repeatOf(form: RepeatForm, visits: SeriesVisits = SERIES_VISITS): Repeat | undefined {
  if (!form.repeat_every_weeks) return undefined;
  const { everyWeeks } = REPEAT_LIMITS;
  const every = Number(form.repeat_every_weeks);
  const count = Number(form.repeat_count);
  if (!Number.isInteger(every) || every < everyWeeks.min || every > everyWeeks.max) {
    throw new AppError(
      'invalid_request',
      `Repeat every ${everyWeeks.min} to ${everyWeeks.max} weeks.`,
      'repeat_every_weeks',
    );
  }
  // A count left empty is Number('') = 0: refused as too few, in the same words.
  if (!Number.isInteger(count) || count < visits.min || count > visits.max) {
    throw new AppError('invalid_request', visits.refusal(count), 'repeat_count');
  }
  return { everyWeeks: every, count };
}
