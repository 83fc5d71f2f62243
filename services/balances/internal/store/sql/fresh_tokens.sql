-- The tokens the batch's new observations touch (their top_holders may need trimming).
SELECT DISTINCT chain, token FROM fresh_obs
