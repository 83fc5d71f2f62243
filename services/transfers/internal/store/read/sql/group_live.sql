-- Whether attribution group $1 is live (its rollups kept); no row when it has none.
SELECT live FROM transfers.groups WHERE grp = $1
