/**
 * The API reference page (/docs) in the product's own name and logo rather than the
 * framework's; served by the gateway itself like the rest of the page (no CDN).
 */

/** The modelgate mark: two gate posts and a lintel, then the name. */
export const PRODUCT_LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="180" height="40" viewBox="0 0 180 40" role="img" aria-label="modelgate">
  <rect x="1" y="1" width="38" height="38" rx="8" fill="#1f4e79"/>
  <rect x="9" y="10" width="22" height="4" rx="1" fill="#ffffff"/>
  <rect x="11" y="14" width="5" height="17" fill="#ffffff"/>
  <rect x="24" y="14" width="5" height="17" fill="#ffffff"/>
  <text x="48" y="27" font-family="Helvetica, Arial, sans-serif" font-size="20" font-weight="700" fill="#ffffff">modelgate</text>
</svg>
`;

/** The mark alone, for the browser tab. */
export const PRODUCT_ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 40 40">
  <rect x="1" y="1" width="38" height="38" rx="8" fill="#1f4e79"/>
  <rect x="9" y="10" width="22" height="4" rx="1" fill="#ffffff"/>
  <rect x="11" y="14" width="5" height="17" fill="#ffffff"/>
  <rect x="24" y="14" width="5" height="17" fill="#ffffff"/>
</svg>
`;

/** The one URL of the OpenAPI document: GET / and the README point to it, and so does the page. */
export const OPENAPI_DOCUMENT_PATH = '/openapi.json';
/** Where the API reference page is served. */
export const API_REFERENCE_PATH = '/docs';
