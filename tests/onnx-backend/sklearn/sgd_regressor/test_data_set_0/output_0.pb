BvariableJ`Њ,mCюm{C!г"CФЊсB9
6Cг‚CwаBbµ=Ck™CъбkC€B(C?ґ3CvCЬBЌ»BxfpCйЅBшЅCz€BчSЙBФ9SCцЅBC“ЯCcШ C! C