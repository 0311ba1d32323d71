/** The product prefix of every user-visible Pi Session Continuity message (spec §11). */
export const PRODUCT_PREFIX = "[continuity]";
/** Where this module was loaded from: lets a gate tell an installed copy from a workspace one. */
export const LOADED_FROM = import.meta.url;
