-- Every chain's first hour not in flow_address_hours yet (earlier hours are there), newest
-- delivered hour and end of the hours a close has announced, infinities clamped to times Go
-- reads (-infinity, nothing yet, to the year 1).
SELECT chain,
       least(greatest(rolled_until, TIMESTAMPTZ '0001-01-01 00:00:00+00'), TIMESTAMPTZ '9999-01-01 00:00:00+00'),
       least(greatest(head, TIMESTAMPTZ '0001-01-01 00:00:00+00'), TIMESTAMPTZ '9999-01-01 00:00:00+00'),
       least(greatest(closing_until, TIMESTAMPTZ '0001-01-01 00:00:00+00'), TIMESTAMPTZ '9999-01-01 00:00:00+00')
FROM market.flow_marks
