import { BACKGROUND_HEADER } from './session.ts';

/**
 * The console's only script, served from /console/assets/console.js (the CSP allows scripts from this
 * origin only). On a diary it asks every POLL_MS whether the location's bookings changed (a booking by
 * another desk, the API or the phone agent) and, when they did, fetches the page again and swaps the
 * diary in place: no reload, the scroll position and the focus kept. Once a minute it fetches the
 * page anyway (the current-time line moves; a hold's time runs out), and when only that line moved,
 * moves just the line. Everything works without it but the live updates.
 * Its requests are not activity (session.ts): a diary left open still signs out after 30 idle minutes.
 * `prefix` is PUBLIC_BASE_URL's path (public-base-url.ts publicPathPrefix): the addresses it asks for
 * are under it, and the place to come back to after signing in is the page's path without it, as the
 * console's routes match it (session.ts safeNext).
 */
export function consoleScript(prefix: string): string {
  return `'use strict';
(function () {
  var BASE = ${JSON.stringify(prefix)};
  var POLL_MS = 4000;
  var lastSwap = Date.now();
  function diary() { return document.getElementById('diary'); }
  function withoutNowLines(element) {
    var copy = element.cloneNode(true);
    var lines = copy.querySelectorAll('.now');
    for (var i = 0; i < lines.length; i++) lines[i].remove();
    return copy.innerHTML;
  }
  function poll() {
    var d = diary();
    if (!d) return;
    var url = BASE + '/console/diary/stamp?location=' + encodeURIComponent(d.getAttribute('data-location'));
    fetch(url, { credentials: 'same-origin', headers: { accept: 'application/json', '${BACKGROUND_HEADER}': '1' } })
      .then(function (r) {
        // The session ended (30 idle minutes, or signed out elsewhere): say so on the sign-in page.
        if (r.status === 401) {
          var path = location.pathname.indexOf(BASE + '/') === 0 ? location.pathname.slice(BASE.length) : location.pathname;
          location.assign(BASE + '/console/sign-in?expired=1&next=' + encodeURIComponent(path + location.search));
          throw new Error('signed out');
        }
        return r.json();
      })
      .then(function (body) {
        // Unchanged bookings: the page is fetched again only once a minute, to move the current-time line.
        if (body.stamp === d.getAttribute('data-stamp') && Date.now() - lastSwap < 60000) return;
        return fetch(location.href, { credentials: 'same-origin', headers: { '${BACKGROUND_HEADER}': '1' } })
          .then(function (r) { return r.text(); })
          .then(function (html) {
            var fresh = new DOMParser().parseFromString(html, 'text/html').getElementById('diary');
            var current = diary();
            if (!fresh || !current) return;
            lastSwap = Date.now();
            // Only the current-time line moved (the minute's refresh of a diary nothing else changed
            // in): that line alone is moved. Redrawn, the whole diary, a live region, would be read
            // out again to a screen reader every minute.
            var lines = current.querySelectorAll('.now');
            var freshLines = fresh.querySelectorAll('.now');
            if (lines.length === freshLines.length && withoutNowLines(current) === withoutNowLines(fresh)) {
              for (var n = 0; n < lines.length; n++) {
                lines[n].setAttribute('style', freshLines[n].getAttribute('style') || '');
                lines[n].setAttribute('aria-label', freshLines[n].getAttribute('aria-label') || '');
              }
              current.setAttribute('data-stamp', fresh.getAttribute('data-stamp'));
              return;
            }
            var scroller = current.querySelector('.scroll');
            var left = scroller ? scroller.scrollLeft : 0;
            // The link the keyboard is on (a booking, a day): the new diary's link to the same place
            // gets the focus back, or each update would throw a keyboard user back to the page's top.
            var active = document.activeElement;
            var focusedHref = active && active !== current && current.contains(active) ? active.getAttribute('href') : null;
            current.innerHTML = fresh.innerHTML;
            current.setAttribute('data-stamp', fresh.getAttribute('data-stamp'));
            var again = current.querySelector('.scroll');
            if (again) again.scrollLeft = left;
            if (focusedHref !== null) {
              var links = current.querySelectorAll('a[href]');
              for (var i = 0; i < links.length; i++) {
                if (links[i].getAttribute('href') === focusedHref) { links[i].focus({ preventScroll: true }); break; }
              }
            }
          });
      })
      .catch(function () {})
      .then(function () { setTimeout(poll, POLL_MS); });
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', function () { setTimeout(poll, POLL_MS); });
  else setTimeout(poll, POLL_MS);
})();
`;
}
