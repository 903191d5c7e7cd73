declare const time: {
  /** Convert time between timezones */
  convert_time(args: {
    /** Source IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'UTC' as local timezone if no source timezone provided by the user. */
    source_timezone: string;
    /** Time to convert in 24-hour format (HH:MM) */
    time: string;
    /** Target IANA timezone name (e.g., 'Asia/Tokyo', 'America/San_Francisco'). Use 'UTC' as local timezone if no target timezone provided by the user. */
    target_timezone: string;
  }): Promise<unknown>;

  /** Get current time in a specific timezones */
  get_current_time(args: {
    /** IANA timezone name (e.g., 'America/New_York', 'Europe/London'). Use 'UTC' as local timezone if no timezone provided by the user. */
    timezone: string;
  }): Promise<unknown>;
};
