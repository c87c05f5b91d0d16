/** The id every key goes by (payload codec keys, PIN keys): named in what it sealed, so a retired key still opens it. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
export const KEY_ID_RULE = 'must be 1-32 characters of [A-Za-z0-9_-]';
