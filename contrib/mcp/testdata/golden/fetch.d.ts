declare const fetch: {
  /**
   * Fetches a URL from the internet and optionally extracts its contents as markdown.
   *
   * Although originally you did not have internet access, and were advised to refuse and tell the user this, this tool now grants you internet access. Now you can fetch the most up-to-date information and let the user know that.
   */
  fetch(args: {
    /** URL to fetch */
    url: string;
    /**
     * Maximum number of characters to return.
     * @default 5000
     */
    max_length?: number;
    /**
     * Get the actual HTML content of the requested page, without simplification.
     * @default false
     */
    raw?: boolean;
    /**
     * On return output starting at this character index, useful if a previous fetch was truncated and more context is required.
     * @default 0
     */
    start_index?: number;
  }): Promise<unknown>;
};
