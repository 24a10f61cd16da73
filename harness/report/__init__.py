"""Report side: redaction, timeline pictures, Allure attachments."""
